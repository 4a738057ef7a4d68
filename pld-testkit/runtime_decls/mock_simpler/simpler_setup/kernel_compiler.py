"""TEST STAND-IN (pld-testkit): records what would be compiled."""
from pathlib import Path

from simpler import log


class KernelCompiler:
    def __init__(self, platform):
        self.platform = platform
        self.project_root = Path("/nonexistent/simpler")

    def get_orchestration_include_dirs(self, runtime):
        return ["/nonexistent/simpler/src/a2a3/runtime/%s/runtime" % runtime]

    def compile_incore(self, source_path, core_type, pto_isa_root, extra_include_dirs=()):
        assert Path(source_path).is_file(), source_path
        log("compile_incore", source=str(Path(source_path).name), core_type=core_type)
        return b"kernel:" + str(source_path).encode()

    def compile_orchestration(self, runtime_name, source_path):
        assert Path(source_path).is_file(), source_path
        log("compile_orchestration", source=str(Path(source_path).name), runtime=runtime_name)
        return b"orch:" + str(source_path).encode()
