"""A post-norm's layer norm: LayerNorm(a + b), whose residual sum torch-mlir widens to f64 for the
mean and the variance; fuse-elementwise computes the sum again in both instead of writing the
f64 tensor (fuse-elementwise.mlir shows the IR). Through refbackend-vectorized as on a CPU with
AVX2 and with AVX-512, for rows of 16, 100 (a partial vector) and 768 elements (BERT's), with
and without the norm's weight and bias: the results match torch."""

from __future__ import annotations

import pytest

from pytest_mlirpipe import ExecutionVerdict

torch = pytest.importorskip("torch")
nn = torch.nn


class PostNorm(nn.Module):
    """LayerNorm(a + b), a and b the two halves of the input's last dimension."""

    def __init__(self, width: int, affine: bool) -> None:
        super().__init__()
        torch.manual_seed(width)
        self.norm = nn.LayerNorm(width, elementwise_affine=affine)
        if affine:
            with torch.no_grad():
                self.norm.weight.uniform_(0.5, 1.5)
                self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        a, b = x.chunk(2, dim=-1)
        return self.norm(a + b)


@pytest.mark.parametrize("width", [16, 100, 768])
@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
@pytest.mark.parametrize("cpu", ["avx2,fma", "avx2,fma,avx512f"], ids=["avx2", "avx512f"])
def test_post_norm_matches_torch(width, affine, cpu, verdict_on_cpu):
    model = PostNorm(width, affine).eval()
    assert verdict_on_cpu(model, (2, 9, 2 * width), cpu) is ExecutionVerdict.PASS
