"""Modules that import torch are read from source, so a static check stays fast."""

import json
import subprocess
import sys

CHAPTER = """---
title: t
---

```{python}
from mlsys.emulate.tp import matmul_workload, matmul_workloda
import mlsys.emulate.cluster as cl
cl.run_workloads
cl.run_workload
```
"""

PROBE = """
import json, sys
from mlsys.book.check import check_static
findings = check_static([sys.argv[1]])
print(json.dumps({"torch": "torch" in sys.modules,
                  "errors": [(f.line, f.message) for f in findings if f.severity == "error"]}))
"""


def test_static_check_reads_torch_modules_without_importing_torch(tmp_path):
    chapter = tmp_path / "ch.qmd"
    chapter.write_text(CHAPTER)
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(chapter)], capture_output=True, text=True, check=True
    )
    data = json.loads(out.stdout)
    assert data["torch"] is False
    messages = [m for _, m in data["errors"]]
    assert [line for line, _ in data["errors"]] == [6, 9]
    assert "did you mean 'matmul_workload'" in messages[0]
    assert "'run_workload'" in messages[1] and "run_workloads" in messages[1]
