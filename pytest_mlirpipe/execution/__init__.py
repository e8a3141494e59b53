"""Execution side: PyTorch and ONNX front ends to MLIR; torch is imported only when used."""
