# Session 58 (GPU=h200|h100 CALL=callN BUDGET=s [ID OVR]): issue 21.3's serving decode grid after
# 55c46ff's split by the longest sequence, `fmha_decode_serving-s58` unless ID says otherwise
# (the H100's batch 16 alone: ID=fmha_decode_serving-b16-s58 OVR='sweep.groups.0.product.batch=[16]').
# The call itself, one run per call with the wheels in two parts: scripts/decode_serving_call.sh.
ID=${ID:-fmha_decode_serving-s58} exec bash scripts/decode_serving_call.sh
