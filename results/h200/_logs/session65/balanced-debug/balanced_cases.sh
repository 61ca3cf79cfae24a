# debug (session 65): balanced partials over several cases, one process each
for c in "([4096, 3001, 1000, 17], 2, 8)" "([4096, 3001, 1000, 16], 2, 8)" "([4096, 3001, 1000, 64], 2, 8)" \
         "([4096, 3001, 1000, 17], 2, 8, 256, 2)" "([4096, 3001, 1000, 17], 2, 8, 16, 2)" \
         "([1000, 17], 2, 1)" "([1000, 17], 2, 2)" "([17, 1000], 2, 2)" "([64, 64], 1, 1)" "([128, 64], 1, 1)" "([64, 128], 1, 1)" "([100, 100], 1, 1)"; do
  echo "== $c"; timeout 60 python3 scripts/balanced_debug2.py "$c" 2>&1 | grep -v Warn | grep "pid\|Error" | head -4 | cut -c1-200
done
