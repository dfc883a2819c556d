# A 1-D sweep written by `preserve-model --sweep AXIS --plot FILE`: request time, throughput
# density per mm2, tokens/s per dollar and tokens per joule per mode against the swept axis.
# Draws only; every number comes from the CSV.
# Variables (gnuplot -e): csv, out, term, xcol (the axis column name, with its unit),
# have_cost and have_energy (0 when the accelerator has no cost or energy data: the panel says so).
set terminal @term
set output out
set datafile separator ","
set datafile missing "NaN"
set datafile commentschars "#"
set termoption noenhanced
set key autotitle columnhead
set grid
set key below horizontal font ",9"
xlabel = xcol
xlabel = (xlabel eq "l2_capacity_MiB") ? "L2 capacity (MiB)" : \
         (xlabel eq "l2_bandwidth_TBps") ? "L2 bandwidth (TB/s)" : \
         (xlabel eq "compute_TFLOPS") ? "peak compute (TFLOP/s)" : \
         (xlabel eq "hbm_bandwidth_TBps") ? "HBM bandwidth (TB/s)" : \
         (xlabel eq "link_bandwidth_Gbps") ? "link bandwidth (Gbit/s)" : \
         (xlabel eq "devices") ? "devices (tensor parallel)" : \
         (xlabel eq "batch") ? "batch (sequences)" : \
         (xlabel eq "seq_len") ? "sequence length (tokens)" : xlabel
if (!exists("have_cost")) have_cost = 1
if (!exists("have_energy")) have_energy = 1
set multiplot layout 2,2
set xlabel xlabel
set ylabel "request time (s)"
set title "End-to-end request time"
plot csv using (column(xcol)):(column("serial_request_s")) with linespoints lw 2 title "serial", \
     '' using (column(xcol)):(column("fused_request_s")) with linespoints lw 2 title "fused GEMM+allreduce", \
     '' using (column(xcol)):(column("preserve_request_s")) with linespoints lw 2 title "PRESERVE"
set ylabel "tokens/s per mm^2"
set title "Per mm^2 (generated tokens/s / (devices x die mm^2))"
plot csv using (column(xcol)):(column("density_serial_tokens_per_s_per_mm2")) with linespoints lw 2 title "serial", \
     '' using (column(xcol)):(column("density_fused_tokens_per_s_per_mm2")) with linespoints lw 2 title "fused GEMM+allreduce", \
     '' using (column(xcol)):(column("density_preserve_tokens_per_s_per_mm2")) with linespoints lw 2 title "PRESERVE"
set ylabel "tokens/s per USD"
set title "Per dollar (generated tokens/s / (devices x device USD))"
if (have_cost) {
plot csv using (column(xcol)):(column("serial_tokens_per_s_per_usd")) with linespoints lw 2 title "serial", \
     '' using (column(xcol)):(column("fused_tokens_per_s_per_usd")) with linespoints lw 2 title "fused GEMM+allreduce", \
     '' using (column(xcol)):(column("preserve_tokens_per_s_per_usd")) with linespoints lw 2 title "PRESERVE"
} else {
set label 1 "no cost coefficients in the accelerator" at graph 0.5, 0.5 center
plot [0:1] [0:1] -1 notitle
unset label 1
}
set ylabel "tokens per J"
set title "Per joule (generated tokens / energy of all devices)"
if (have_energy) {
plot csv using (column(xcol)):(column("serial_tokens_per_J")) with linespoints lw 2 title "serial", \
     '' using (column(xcol)):(column("fused_tokens_per_J")) with linespoints lw 2 title "fused GEMM+allreduce", \
     '' using (column(xcol)):(column("preserve_tokens_per_J")) with linespoints lw 2 title "PRESERVE"
} else {
set label 1 "no energy coefficients in the accelerator" at graph 0.5, 0.5 center
plot [0:1] [0:1] -1 notitle
unset label 1
}
unset multiplot
