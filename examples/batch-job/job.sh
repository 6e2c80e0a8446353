#!/bin/sh
# The main of the batch-job example: three calls to the sidecar, then exit 0.
set -e
for i in 1 2 3; do
  python3 -c "import sys, urllib.request; print('job: call $i:', urllib.request.urlopen(sys.argv[1]).read().decode().strip())" "http://127.0.0.1:$1/work"
done
echo "job: done"
