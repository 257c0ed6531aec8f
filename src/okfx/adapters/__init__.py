"""Agent-framework adapters. Empty on purpose: importing it pulls in no framework."""
