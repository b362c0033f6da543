"""The chat model of the LLM composer, built from the settings with LangChain's
``init_chat_model``.

Any provider ``init_chat_model`` knows works (``openai:gpt-4.1-mini``, ``anthropic:...``,
``ollama:...``) once its LangChain package is installed; ``apiatlas[openai]`` installs the OpenAI
one. A missing package is a :class:`~apiatlas.extras.MissingExtraError` that says what to install.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel

from apiatlas.config import Settings
from apiatlas.errors import ConfigError, ModelError
from apiatlas.extras import EXTRAS, MissingExtraError, require

PURPOSE = "the LLM composer (APIATLAS_COMPOSER=llm)"
PROVIDER_MODULES = {"openai": "langchain_openai", "azure_openai": "langchain_openai"}
"""Providers whose LangChain package an apiatlas extra installs: checked before LangChain is
asked, so that the error names the extra."""
TIMEOUT_PROVIDERS = frozenset({"openai", "azure_openai", "anthropic"})
"""Providers whose chat model takes a ``timeout`` (seconds per request)."""


def load_chat_model(settings: Settings) -> BaseChatModel:
    """The chat model ``settings.chat_model`` names (``provider:model``).

    Raises:
        MissingExtraError: LangChain or the provider's package is not installed (names the
            extra, e.g. ``apiatlas[openai]``, or the package to install).
        ConfigError: ``init_chat_model`` does not know the provider.
        ModelError: The model could not be built (e.g. its API key is not set).
    """
    chat = require("langchain.chat_models", extra="openai", purpose=PURPOSE)
    name = settings.chat_model
    provider = name.split(":", 1)[0] if ":" in name else ""
    if provider in PROVIDER_MODULES:
        require(PROVIDER_MODULES[provider], purpose=f"{PURPOSE} with {name!r}")
    kwargs: dict[str, Any] = {}
    if provider in TIMEOUT_PROVIDERS:
        # The composer also stops waiting after the timeout; this ends the request itself.
        kwargs["timeout"] = settings.chat_timeout
    try:
        return chat.init_chat_model(name, **kwargs)  # type: ignore[no-any-return]
    except ImportError as e:
        raise _missing_package(name, e) from e
    except ValueError as e:  # an unknown or unguessable provider
        raise ConfigError(
            f"APIATLAS_CHAT_MODEL={name!r} names no chat model LangChain knows: {e}"
        ) from e
    except Exception as e:  # the provider's own checks, e.g. a missing API key
        raise ModelError(f"could not create the chat model {name!r}: {e}") from e


def _missing_package(name: str, error: ImportError) -> MissingExtraError:
    """The error for a provider package ``init_chat_model`` could not import."""
    module = getattr(error.__cause__, "name", None) or ""
    extra = EXTRAS.get(module.split(".", 1)[0])
    if extra:
        return MissingExtraError(
            f"{module} is not installed for {PURPOSE} with {name!r}: install it with "
            f"pip install 'apiatlas[{extra}]'"
        )
    return MissingExtraError(f"the chat model {name!r} for {PURPOSE} needs a package: {error}")
