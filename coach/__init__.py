"""coach: partial trajectory + similar episodes -> failure risk + Guidance. Pure Python; no I/O."""

__all__: list[str] = []
