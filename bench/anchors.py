"""What the audit log's anchor costs on the hot path: one tag override, with and without it.

    .venv/bin/python bench/anchors.py [--overrides 300]

A tag override is one short transaction that appends an audit entry, so it writes the anchor (one
small JSON file in the key folder, app/anchors.py). The sample project is imported into a file under
a temporary folder (its key folder there too); one reviewer then flips the tag of the first point of
one answer N times, timed with the anchor's listeners in place and with them removed, alternating in
blocks so that the disk's and the page cache's drift falls on both alike. The median and 95th
percentile of one override are printed, and what the anchor adds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--overrides", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        os.environ["ASSAY_KEY_DIR"] = str(Path(folder) / "keys")
        from sqlalchemy import event
        from sqlalchemy.orm import Session

        from app import anchors
        from app.ingest.datasets import import_dataset
        from app.project import SAMPLE_DATASET, Project
        from app.review.service import ReviewService
        from models.vocabulary import Tag
        from storage.db import url_for_path

        project = Project.open(url_for_path(Path(folder) / "bench.assay"))
        import_dataset(project.sessions, SAMPLE_DATASET)
        service = ReviewService(project, "ana")
        answer = project.answers()[0].id
        point = service.open(answer).points[0].point.id
        times: dict[bool, list[float]] = {True: [], False: []}
        hooks = (("before_commit", anchors._before_commit), ("after_commit", anchors._after_commit))
        for block in range(args.overrides // 10):
            anchored = block % 2 == 0
            for name, hook in hooks:
                if anchored and not event.contains(Session, name, hook):
                    event.listen(Session, name, hook)
                elif not anchored and event.contains(Session, name, hook):
                    event.remove(Session, name, hook)
            for i in range(10):
                started = time.perf_counter()
                service.set_tag(answer, point, Tag.CORRECT if i % 2 else Tag.INCORRECT)
                times[anchored].append(time.perf_counter() - started)
        anchors.watch()
        project.close()
    for anchored, label in ((False, "without the anchor"), (True, "with the anchor")):
        found = sorted(times[anchored])
        p95 = found[int(len(found) * 0.95) - 1]
        print(f"{label:20} median {statistics.median(found) * 1e3:6.2f} ms   p95 {p95 * 1e3:6.2f} ms   n={len(found)}")
    added = statistics.median(times[True]) - statistics.median(times[False])
    print(f"the anchor adds {added * 1e3:.2f} ms to the median tag override")


if __name__ == "__main__":
    main()
