# A 1-D sweep written by `preserve-model --sweep AXIS --plot FILE`: request time and throughput
# density per mode against the swept axis. Draws only; every number comes from the CSV.
# Variables (gnuplot -e): csv, out, term, xcol (the axis column name, with its unit).
set terminal @term
set output out
set datafile separator ","
set datafile missing "NaN"
set datafile commentschars "#"
set termoption noenhanced
set key autotitle columnhead
set grid
set key outside right top
xlabel = xcol
xlabel = (xlabel eq "l2_capacity_MiB") ? "L2 capacity (MiB)" : \
         (xlabel eq "l2_bandwidth_TBps") ? "L2 bandwidth (TB/s)" : \
         (xlabel eq "compute_TFLOPS") ? "peak compute (TFLOP/s)" : \
         (xlabel eq "hbm_bandwidth_TBps") ? "HBM bandwidth (TB/s)" : \
         (xlabel eq "link_bandwidth_Gbps") ? "link bandwidth (Gbit/s)" : \
         (xlabel eq "devices") ? "devices (tensor parallel)" : \
         (xlabel eq "batch") ? "batch (sequences)" : \
         (xlabel eq "seq_len") ? "sequence length (tokens)" : xlabel
set multiplot layout 2,1
set xlabel xlabel
set ylabel "request time (s)"
set title "End-to-end request time"
plot csv using (column(xcol)):(column("serial_request_s")) with linespoints lw 2 title "serial", \
     '' using (column(xcol)):(column("fused_request_s")) with linespoints lw 2 title "fused GEMM+allreduce", \
     '' using (column(xcol)):(column("preserve_request_s")) with linespoints lw 2 title "PRESERVE"
set ylabel "tokens/s per mm^2"
set title "Throughput density (generated tokens/s / (devices x die mm^2))"
plot csv using (column(xcol)):(column("density_serial_tokens_per_s_per_mm2")) with linespoints lw 2 title "serial", \
     '' using (column(xcol)):(column("density_fused_tokens_per_s_per_mm2")) with linespoints lw 2 title "fused GEMM+allreduce", \
     '' using (column(xcol)):(column("density_preserve_tokens_per_s_per_mm2")) with linespoints lw 2 title "PRESERVE"
unset multiplot
