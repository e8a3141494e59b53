"""Fixtures of the report tests: the matmul's report, a pipeline that fails late."""

from __future__ import annotations

import pytest
from report_inputs import MATMUL

from pytest_mlirpipe.lowering.catalog import catalog_for
from pytest_mlirpipe.lowering.stage_report import StageReport, report_stages


@pytest.fixture(scope="session")
def matmul_report() -> StageReport:
    return report_stages(MATMUL, catalog_for([]).get("refbackend"), source_name="mm.mlir")
