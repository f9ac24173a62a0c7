"""`webcoach embedder`: the embedding model."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ems_service.cli.common import load_settings

app = typer.Typer(help="The embedding model.", no_args_is_help=True)


@app.command("export")
def embedder_export(
    path: Path | None = typer.Option(None, help="target fp32 .onnx (default: the environment's share dir); the "
                                              "other graphs are written beside it"),
    int8: bool = typer.Option(False, "--int8", help="also write the fully int8 graph (opt-in backend onnx_int8)"),
    agreement_texts: Path | None = typer.Option(None, exists=True, dir_okay=False,
                                                help="JSON Lines runs whose tasks are added to the agreement check"),
) -> None:
    """Export MiniLM to ONNX once (no network): the fp32 graph and the selective int8 graph, each with its measured
    agreement with the torch model (the service uses a graph only at min cosine >= 0.99)."""
    from ems_service.embeddings import default_model_path
    from ems_service.onnx_embedder import default_path
    from ems_service.onnx_embedder.export import export

    load_settings()
    texts = []
    if agreement_texts is not None:
        texts = [json.loads(line).get("task", "") for line in agreement_texts.read_text().splitlines() if line]
    for meta in export(default_model_path(), path or default_path(), int8=int8, texts=[t for t in texts if t]):
        typer.echo(json.dumps(meta))
