"""DuplexAgent: a full-duplex voice-agent runtime with a six-module harness."""

__version__ = "0.1.0"
