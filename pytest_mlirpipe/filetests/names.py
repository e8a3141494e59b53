"""Names the file-test modules share: lit parameters and metrics, side files, folders."""

# Beside a test's own `%t` files: the input IR of a stage that failed or crashed,
REPRO_SUFFIX = ".repro"
# and beside them and that folder, a failing file's stage report: `Output/NAME.stages.html`.
REPORT_SUFFIX = ".stages.html"
# The lit metric that carries the reports of FileCheck engines that disagreed (a list of
# {"argv", "report"}) to the plugin.
DISAGREEMENTS_METRIC = "mlirpipe_filecheck_disagreements"

# lit params (`lit --param NAME=VALUE`; the pytest plugin sets them on its LitConfig).
# Folders of pipelines/*.toml put first on the RUN lines' $MLIRPIPE_PIPELINES_PATH:
PIPELINES_PARAM = "mlirpipe_pipelines"
# Set when a containing pytest process enforces the time limits itself:
CONTAINED_PARAM = "mlirpipe_contained"
# The FileCheck engine for this run (auto, llvm, python, both), over the suite's own setting:
FILECHECK_PARAM = "mlirpipe_filecheck"
# Runs of each file whose outputs must agree (lit --param mlirpipe_repeat=N):
REPEAT_PARAM = "mlirpipe_repeat"

# FileCheck programs, as RUN lines name them by path (LLVM's) or on PATH.
FILECHECK_NAMES = ("FileCheck", "filecheck")

# Folders that hold inputs of tests, not tests (lit's convention).
EXCLUDED_DIRS = ("Inputs", "Output")

# The tools RUN lines run through this Python (config.tool_commands), by module: how a report
# names them.
TOOL_MODULES = {
    "pytest_mlirpipe.tools.opt": "mlirpipe-opt",
    "pytest_mlirpipe.tools.ir_assert": "mlirpipe-assert",
    "pytest_mlirpipe.cli.main": "mlirpipe",
    "pytest_mlirpipe.tools.filecheck": "filecheck",
}
