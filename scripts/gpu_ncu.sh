#!/usr/bin/env bash
# ncu warp-stall profile of one mma_sync tile at M=1, L2 flushed before the launch:
#   SHAPE=8192x8192 bash scripts/gpu_ncu.sh "Tile(8, 32, 256, 1, 2, 4, 8, stream=4, occupancy=2)" [M]
# (per issued instruction, warp stall cycles by reason; run on the GPU machine)
m=smsp__average_warps_issue_stalled; r=per_issue_active.ratio
TILE="$1" timeout 120 ncu --clock-control none --kernel-name humming_entry --metrics \
  gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,sm__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,lts__t_sector_hit_rate.pct,${m}_long_scoreboard_$r,${m}_short_scoreboard_$r,${m}_wait_$r,${m}_math_pipe_throttle_$r,${m}_mio_throttle_$r,${m}_lg_throttle_$r,${m}_barrier_$r,${m}_not_selected_$r,${m}_selected_$r,${m}_no_instruction_$r,${m}_dispatch_stall_$r,${m}_branch_resolving_$r,${m}_drain_$r,${m}_membar_$r,${m}_tex_throttle_$r,${m}_imc_miss_$r,${m}_sleeping_$r \
  python3 scripts/gpu_profile.py "${2:-1}" 2>&1 | grep -E "duration|dram__|inst_executed|warps_active|issue_active|hit_rate|stalled" \
  | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | awk '{print $1, $(NF)}'
