"""What scripts/compare-attention and scripts/compare-decode share: running one build's cocktail
binary, as it was built, with its JSON output read back."""
import json
import os
import pathlib
import subprocess


def run_cocktail(binary, args):
    """Runs `binary args...` and returns its JSON output.

    The binary's own lib/ goes first: its RUNPATH names the build tree it was linked in, so a
    copied tree would otherwise load that tree's plugins and compare a build with itself.
    """
    lib = pathlib.Path(binary).resolve().parent.parent / "lib"
    env = dict(os.environ, LD_LIBRARY_PATH=f"{lib}:{os.environ.get('LD_LIBRARY_PATH', '')}")
    out = subprocess.run([binary, *args, "--json"], capture_output=True, text=True, check=True,
                         env=env).stdout
    return json.loads(out)
