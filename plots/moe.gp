# PRESERVE on MoE (scripts/moe.sh): the speedup of PRESERVE over the serial baseline, the
# experts the busiest device reads per MoE layer per step, and the L2 within 1% of the best
# PRESERVE speedup, each against the batch, one line per configuration (model, accelerator,
# consumer semantics). Draws only; every number comes from the CSV.
# Variables (gnuplot -e): data (scripts/moe.sh's moe.csv), configs (the config names,
#   space-separated), out, term.
set terminal @term
set output out
set datafile separator ","
set datafile missing ""
set datafile commentschars "#"
set termoption noenhanced
set logscale x 2
set xrange [0.8:320]
set xtics (1, 4, 16, 64, 256)
set xlabel "batch (sequences)"
set grid
set key top right box opaque font ",8"
set multiplot layout 1,3 title "PRESERVE on mixture-of-experts models: speedup, expert union and the L2 it needs"
set title "speedup of preserve over serial"
set ylabel "speedup (x)"
# Headroom above the curves for the key (it would cover the peaks).
set offsets 0, 0, graph 0.55, 0
plot for [i = 1:words(configs)] data using (strcol(1) eq word(configs, i) ? column("batch") : NaN):(column("speedup_preserve_vs_serial")) \
     with linespoints lw 2 dt i pt (3 + i) title word(configs, i)
set offsets 0, 0, 0, 0
unset key
set title "experts read per MoE layer (busiest device)"
set ylabel "experts"
set logscale y 2
plot for [i = 1:words(configs)] data using (strcol(1) eq word(configs, i) ? column("batch") : NaN):(column("experts_read_per_step")) \
     with linespoints lw 2 dt i pt (3 + i) notitle
set title "L2 within 1% of the best preserve speedup"
set ylabel "L2 capacity (MiB)"
plot for [i = 1:words(configs)] data using (strcol(1) eq word(configs, i) ? column("batch") : NaN):(column("l2_need_MiB")) \
     with linespoints lw 2 dt i pt (3 + i) notitle
unset multiplot
