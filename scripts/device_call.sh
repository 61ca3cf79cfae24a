#!/usr/bin/env bash
# Print the command prefix that hands the local git identity to a lent GPU machine's copy of the
# tree (which has no .git):  "HARNESS_GIT_SHA=<sha> HARNESS_GIT_DIRTY=<0|1>"
sha=$(git rev-parse HEAD)
dirty=$([ -n "$(git status --porcelain --untracked-files=no)" ] && echo 1 || echo 0)
echo "HARNESS_GIT_SHA=$sha HARNESS_GIT_DIRTY=$dirty"
