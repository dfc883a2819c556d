# A 2-D grid written by `preserve-model --sweep A --sweep B --plot FILE`: the PRESERVE speedup
# over the serial baseline as a heatmap. Draws only; every number comes from the CSV.
# Variables (gnuplot -e): csv, out, term, xcol, ycol (axis column names, with units).
set terminal @term
set output out
set datafile separator ","
set datafile missing "NaN"
set datafile commentschars "#"
set view map
set xlabel xcol
set ylabel ycol
set cblabel "speedup PRESERVE vs serial (x)"
set title "PRESERVE speedup over the serial baseline"
set palette rgbformulae 33,13,10
set key off
splot csv skip 1 using (column(xcol)):(column(ycol)):(column("speedup_preserve_vs_serial")) with image
