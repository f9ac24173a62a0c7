"""HTTP routes: thin, each parses, calls one service function, returns."""
