"""The package version, in a leaf module so anything may import it without loading the package root."""

__version__ = "0.1.0"
