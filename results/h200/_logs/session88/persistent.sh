# Session 88, call 3 (nvidia-h200): session 86's next-persistent.sh (the persistent Gluon FMHA's
# GPU tests, then its A/B beside the one-CTA-per-item headline and cuDNN), the run named
# fmha-persistent-s88. Carry `.whl` and `.cache`.
RUN=s88 exec bash results/h200/_logs/session86/next-persistent.sh
