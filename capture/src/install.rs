//! Registering reflect-hook in Claude Code settings. Being written.
