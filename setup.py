"""`pip install .`: builds the `_dpc` extension and the `dpc` compiler (which
dpc.compile runs) with the project's own CMake, then packs both into the
`dpc` package.

A small build_ext rather than scikit-build-core: setuptools is all it needs
(Debian has it; `pip install --no-build-isolation .` works offline), and
the CMake build stays the one tools/setup.sh runs. The build directory is
<repo>/build-pip (DPC_PIP_BUILD_DIR overrides), beside build/ at the same
depth so that ccache (CCACHE_BASEDIR=<repo>) finds what build/ compiled.
"""
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.environ.get("DPC_PIP_BUILD_DIR",
                               os.path.join(ROOT, "build-pip"))
        env = dict(os.environ, CCACHE_BASEDIR=ROOT)
        subprocess.check_call(
            ["cmake", "-G", "Ninja", "-S", ROOT, "-B", build,
             "-DCMAKE_BUILD_TYPE=Release", "-DLLVM_USE_LINKER=lld",
             "-DPython3_EXECUTABLE=" + sys.executable], env=env)
        subprocess.check_call(
            ["cmake", "--build", build, "--target", "_dpc", "dpc"], env=env)
        target = self.get_ext_fullpath(ext.name)
        package = os.path.dirname(target)
        os.makedirs(os.path.join(package, "bin"), exist_ok=True)
        shutil.copy2(os.path.join(build, "python", "dpc",
                                  os.path.basename(target)), target)
        shutil.copy2(os.path.join(build, "bin", "dpc"),
                     os.path.join(package, "bin", "dpc"))


setup(ext_modules=[Extension("dpc._dpc", sources=[])],
      cmdclass={"build_ext": CMakeBuild},
      options={"build": {"build_base": os.path.join("build-pip",
                                                    "setuptools")}})
