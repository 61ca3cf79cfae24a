# Session 59 (GPU=h100 CALL=callN BUDGET=s ID=run OVR=overrides): the H100's rest of issue 21.3's
# serving decode grid: the 28 rows of batch 16 that `fmha_decode_serving-b16-s58` did not reach
# (its folder carried, so only those ran), and batch 64 (`fmha_decode_serving-b64-s59`, killed
# by call 2's limit before it wrote anything). The call itself: scripts/decode_serving_call.sh.
exec bash scripts/decode_serving_call.sh
