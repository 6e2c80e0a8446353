# gnuplot script for bench/run: podinit's CPU and memory against the number
# of sidecars (section 8 of docs/benchmarks.md).
# usage: gnuplot -e "data='scale.tsv'; out='benchmarks-scale.png'" bench/scale.gp
set terminal pngcairo size 800,480 font ",10"
set output out
set title "podinit with N sidecars, each with a tcp readiness probe every 1 s"
set xlabel "sidecars (log scale)"
set logscale x
set ylabel "CPU, % of one core"
set y2label "VmRSS, MB"
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
set key left top
set grid
plot data using 1:2 axes x1y1 with linespoints lw 2 pt 7 title "CPU %", \
     data using 1:3 axes x1y2 with linespoints lw 2 pt 5 title "VmRSS MB"
