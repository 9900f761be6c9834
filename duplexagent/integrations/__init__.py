"""Integrations with voice-agent frameworks (optional extras)."""
