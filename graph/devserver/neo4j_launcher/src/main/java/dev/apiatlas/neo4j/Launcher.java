package dev.apiatlas.neo4j;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.io.ByteUnit;

/**
 * Runs a real Neo4j 5.26 Community DBMS with a Bolt connector, for development, tests and CI.
 *
 * <p>Usage: {@code APIATLAS_NEO4J_PASSWORD=PW Launcher --home DIR --port N [--listen 127.0.0.1]}. Prints one
 * line starting with {@code apiatlas-neo4j ready} once Bolt is open, then blocks until the JVM is
 * asked to stop (SIGTERM), when a shutdown hook closes the DBMS cleanly.
 */
public final class Launcher {
    /** The line the Python side waits for (besides a successful Bolt handshake). */
    static final String READY = "apiatlas-neo4j ready";
    static final String PASSWORD_ENV = "APIATLAS_NEO4J_PASSWORD";

    private Launcher() {}

    public static void main(String[] args) throws InterruptedException {
        Map<String, String> opts = parse(args);
        Path home = Path.of(require(opts, "--home")).toAbsolutePath();
        int port = Integer.parseInt(require(opts, "--port"));
        // The password comes from the environment, never argv: argv is visible to every user in ps.
        String password = System.getenv(PASSWORD_ENV);
        if (password == null || password.isEmpty()) {
            usage("missing the " + PASSWORD_ENV + " environment variable");
        }
        String listen = opts.getOrDefault("--listen", "127.0.0.1");

        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress(listen, port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress(listen, port))
                .setConfig(GraphDatabaseSettings.auth_enabled, true)
                // A development server on a shared machine: keep memory and disk modest.
                .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.mebiBytes(256))
                .setConfig(GraphDatabaseSettings.keep_logical_logs, "1 files")
                .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                // Offline by default: no usage reports to the outside world.
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                .build();
        Runtime.getRuntime().addShutdownHook(new Thread(dbms::shutdown, "apiatlas-neo4j-shutdown"));

        try {
            setInitialPassword(dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME), password);
            // Touch the default database so the first client does not pay for its start-up.
            dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME).executeTransactionally("RETURN 1");
        } catch (RuntimeException e) {
            // The DBMS threads are not daemons: exit explicitly (the hook shuts the DBMS down).
            System.err.println("apiatlas-neo4j: start-up failed: " + e.getMessage());
            System.exit(1);
        }

        System.out.println(READY + " bolt://" + listen + ":" + port);
        System.out.flush();
        new CountDownLatch(1).await();
    }

    /**
     * Sets the {@code neo4j} user's password while it still has the factory default (first start).
     * Later starts keep the stored password, so a client with a different one is refused.
     */
    private static void setInitialPassword(GraphDatabaseService system, String password) {
        Map<String, Object> params = new HashMap<>();
        params.put("pw", password);
        boolean changeRequired = system.executeTransactionally(
                "SHOW USERS YIELD user, passwordChangeRequired "
                        + "WHERE user = 'neo4j' RETURN passwordChangeRequired",
                Map.of(),
                result -> result.hasNext() && Boolean.TRUE.equals(result.next().get("passwordChangeRequired")));
        if (changeRequired) {
            system.executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $pw CHANGE NOT REQUIRED", params);
        }
    }

    private static Map<String, String> parse(String[] args) {
        Map<String, String> opts = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                usage("unexpected argument: " + args[i]);
            }
            opts.put(args[i], args[++i]);
        }
        return opts;
    }

    private static String require(Map<String, String> opts, String name) {
        String value = opts.get(name);
        if (value == null || value.isEmpty()) {
            usage("missing " + name);
        }
        return value;
    }

    private static void usage(String problem) {
        System.err.println("apiatlas-neo4j: " + problem);
        System.err.println("usage: APIATLAS_NEO4J_PASSWORD=PW Launcher --home DIR --port N [--listen 127.0.0.1]");
        System.exit(2);
    }
}
