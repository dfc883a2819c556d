# timeline.gp - the two-stream schedule of one decoder layer as a Gantt chart.
# Input (from `preserve-model timeline --plot FILE`): csv (lane_index,lane,node,kind,start_us,
# end_us,bytes), out, term, ttl (the title), t_end (the layer's length, us). Computes nothing:
# bars from start to end per lane, labels on the bars wide enough to hold one.
set terminal @term
set output out
set datafile separator ','
set datafile commentschars '#'
set key autotitle columnhead
set title ttl noenhanced
set xlabel 'time from the start of the layer (us)'
set ytics ('compute' 0, 'allreduce' 1, 'prefetch (HBM to L2)' 2)
set yrange [-0.7:2.7]
set grid xtics
set key off
set style fill solid 0.85 border rgb '#333333'
set palette defined (0 '#4C72B0', 1 '#DD8452', 2 '#55A868')
unset colorbox
set cbrange [0:2]
set arrow from t_end, graph 0 to t_end, graph 1 nohead dashtype 2 lc rgb '#777777'
set label 'next layer' at t_end, graph 0.97 offset 0.5,0 font ',9' tc rgb '#777777'
minw = t_end / 25.0
plot csv using (($5 + $6) / 2):1:(($6 - $5) / 2):(0.33):1 with boxxyerror fc palette, \
     '' using ((($6 - $5) > minw) ? ($5 + $6) / 2 : 1/0):1:3 with labels font ',8' noenhanced
