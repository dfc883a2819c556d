# A 2-D grid written by `preserve-model --sweep A --sweep B --plot FILE`: the PRESERVE speedup
# over the serial baseline as a heatmap (pm3d, so geometric grids draw correctly on log axes).
# Draws only; every number comes from the CSV.
# Variables (gnuplot -e): csv, out, term, xcol, ycol (axis column names, with units).
set terminal @term
set output out
set datafile separator ","
set datafile missing "NaN"
set datafile commentschars "#"
set termoption noenhanced
geometric(c) = (c eq "devices" || c eq "batch" || c eq "seq_len" || c eq "compute_TFLOPS")
if (geometric(xcol)) { set logscale x 2 }
if (geometric(ycol)) { set logscale y 2 }
set view map
set pm3d map corners2color c1
set xlabel xcol
set ylabel ycol
set cblabel "speedup PRESERVE vs serial (x)"
set title "PRESERVE speedup over the serial baseline (cell colour = its lower-left grid point)"
set palette rgbformulae 33,13,10
set key off
splot csv skip 1 using (column(xcol)):(column(ycol)):(column("speedup_preserve_vs_serial")) with pm3d
