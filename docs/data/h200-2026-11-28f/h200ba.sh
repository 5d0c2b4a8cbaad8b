#!/bin/bash
# Session 10, call BA (1 H200): GEMM time against operand data (randn, integers in [-2,2],
# uniform, zeros), both layouts, cool and hot; SM clock and power sampled every 50 ms.
TAG=${TAG:-ba}; BUDGET=${BUDGET:-400}; source .dev/common.sh
nvidia-smi --query-gpu=timestamp,index,clocks.sm,power.draw,power.draw.instant,temperature.gpu,clocks_event_reasons.active --format=csv -lms 50 > $R/smi_trace.csv 2>&1 &
SMI=$!
python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name())' > $R/versions.txt 2>&1
CUDA_VISIBLE_DEVICES=0 timeout 300 python3 .dev/data_probe.py $R/data.json > $R/data.log 2>&1; echo "probe rc=$?"; tail -3 $R/data.log; el probe
kill $SMI
