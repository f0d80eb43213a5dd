#!/usr/bin/env bash
# The foundation's accuracy goal: an MLP 784-256-10 reaches at least 0.84 test accuracy on
# Fashion-MNIST within two epochs of sequential SGD (batch 64, learning rate 0.2, seed 1).
. "$(dirname "$0")/lib.sh"

expect_status 0 "train two epochs" -- "$SW" train --data fashion-mnist --model mlp:h=1,u=256 \
  --batch 64 --lr 0.2 --epochs 2 --seed 1 --threads 1 --out "$TMP/f.ckpt"
acc=$(printf '%s\n' "$OUT" | sed -n 's/^test: .*accuracy \([0-9.]*\).*/\1/p')
echo "test accuracy after 2 epochs: ${acc:-none}"
checks=$((checks + 1))
if ! awk -v a="${acc:-0}" 'BEGIN { exit !(a >= 0.84) }'; then
  echo "FAIL: accuracy ${acc:-none} is below 0.84"
  failures=$((failures + 1))
fi
expect_status 0 "eval the checkpoint" -- "$SW" eval --model-file "$TMP/f.ckpt" --threads 1
expect_output "accuracy $acc" "eval reproduces the accuracy"
finish
