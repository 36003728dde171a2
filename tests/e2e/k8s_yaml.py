#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""k8s_yaml.py FILE.yaml: print the YAML documents of FILE as one JSON array (for k8s_validate.js).
Empty documents are left out. Exit 1 on a YAML error, naming the file and line."""
import json
import sys

import yaml

if len(sys.argv) != 2:
    sys.exit("usage: k8s_yaml.py FILE.yaml")
try:
    with open(sys.argv[1], encoding="utf-8") as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
except (OSError, yaml.YAMLError) as e:
    print(f"{sys.argv[1]}: {e}", file=sys.stderr)
    sys.exit(1)
json.dump(docs, sys.stdout, indent=1)
print()
