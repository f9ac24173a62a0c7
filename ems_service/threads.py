"""Thread pools of the numerical libraries, sized for a request path on a small machine."""

from __future__ import annotations

from threadpoolctl import ThreadpoolController


def single_threaded_numpy_blas() -> int:
    """Run numpy's own BLAS on the calling thread only; returns how many BLAS libraries were limited.

    The service's numpy products are small (a query against a few thousand vectors), and an idle OpenBLAS
    pthreads pool keeps spinning after each one: on 2 cores that stalled the next ONNX embedding from ~7 ms
    to ~18 ms (measured here). FAISS's BLAS (OpenMP, used to train the IVF index) is left as it is.
    """
    limited = 0
    for lib in ThreadpoolController().lib_controllers:
        if lib.user_api == "blas" and "numpy" in lib.filepath:
            lib.set_num_threads(1)
            limited += 1
    return limited
