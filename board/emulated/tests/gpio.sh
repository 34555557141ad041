# GPIO through the kernel's character device (uAPI v2) on gpio-sim, with the host-built facekit:
# chip and line info; edge events with kernel timestamps and sequence numbers; active-low; a
# bouncing input (glitches shorter than the debounce period) giving one event with debounce on
# and several without; output values (plain, active-low, an LED blinking) read back through
# gpio-sim's sysfs `value`; then `facekit bench gpio` (100 Hz for 10 s, markers stored in a
# session). Results go to the host as results/gpio-*.json and results/bench-gpio.json; the host
# checks them (scripts/board/check-results.py).
modprobe gpio-sim || fail "modprobe gpio-sim"
grep -q configfs /proc/mounts || mount -t configfs none /sys/kernel/config
C=/sys/kernel/config/gpio-sim/gpiotest
mkdir $C $C/bank0 || fail "gpio-sim configfs"
for l in 0 1 2 3 4; do mkdir $C/bank0/line$l; done
echo 8 > $C/bank0/num_lines; echo facekit-gpiotest > $C/bank0/label
echo TTL_IN > $C/bank0/line0/name; echo BTN > $C/bank0/line1/name; echo BOUNCY > $C/bank0/line2/name
echo LED > $C/bank0/line3/name; echo SYNC > $C/bank0/line4/name
echo 1 > $C/live || fail "gpio-sim did not go live"
CHIP=$(cat $C/bank0/chip_name)
# gpio-sim's per-line attributes live on the GPIO device: pull (what the outside world drives)
# and value (what the line reads, or what a consumer drives on an output).
SIM=/sys/bus/gpio/devices/$CHIP
[ -e $SIM/sim_gpio0/pull ] || fail "no $SIM/sim_gpio0/pull"
pull() { echo pull-$2 > $SIM/sim_gpio$1/pull; }
value() { cat $SIM/sim_gpio$1/value; }
# JSON Lines from `gpio monitor --json` as one JSON array for the host.
jsonl() { { echo '['; sed '$!s/$/,/' "$2"; echo ']'; } > $RUN/$1.json; json $1 $RUN/$1.json; }
# monitor NAME ARGS...: starts `facekit gpio monitor`, waits until its lines are requested.
monitor() {
  n=$1; shift
  fkbg gpio monitor facekit-gpiotest "$@" --json > $RUN/$n.jsonl 2> $RUN/$n.log
  M=$!
  waitline monitoring $RUN/$n.log 100 || fail "gpio monitor $n did not start: $(cat $RUN/$n.log)"
}
finish() { i=0; while [ -e /proc/$M ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done; stopbg $M; cat $RUN/$1.log; jsonl $1 $RUN/$1.jsonl; }

fk gpio info facekit-gpiotest --json > $RUN/gpio-info.json || fail "facekit gpio info"
json gpio-info $RUN/gpio-info.json
fk gpio info

# Three pulses on TTL_IN: six edges, alternating, timestamps rising, seqnos 1..6.
# The timestamps are CLOCK_MONOTONIC: inside the guest's uptime window around the pulses
# (/proc/uptime is CLOCK_BOOTTIME, the same clock on a board that never suspends).
pull 0 down
monitor gpio-edges TTL_IN --edges both --count 6 --duration 20s
t_before=$(up)
for i in 1 2 3; do pull 0 up; sleep 0.05; pull 0 down; sleep 0.05; done
t_after=$(up)
finish gpio-edges
echo "{\"uptimeBefore\": $t_before, \"uptimeAfter\": $t_after}" > $RUN/gpio-clock.json
json gpio-clock $RUN/gpio-clock.json

# Active-low button pulled up: a press (line low) is a rising edge, the release a falling edge.
pull 1 up
monitor gpio-activelow BTN --edges both --active-low --count 2 --duration 20s
pull 1 down; sleep 0.1; pull 1 up
finish gpio-activelow

# A bouncing contact: five level changes 10-40 ms apart (busybox `sleep 0.01` under TCG), ending
# high. With a 200 ms debounce the kernel reports one rising edge; without, one per change. (Writes
# with no pause between them would be merged by the emulated IRQ path even without debounce.)
bounce() { for l in up down up down up; do pull 2 $l; sleep 0.01; done; }
pull 2 down
monitor gpio-debounce BOUNCY --edges both --debounce 200ms --duration 3s
t0=$(up); bounce; echo "bounce took $(since $t0) s"
finish gpio-debounce
pull 2 down
monitor gpio-nodebounce BOUNCY --edges both --duration 3s
t0=$(up); bounce; echo "bounce took $(since $t0) s"
finish gpio-nodebounce

# Outputs read back through gpio-sim's value. The pull is set against the expected value first,
# so a line nobody drives would read wrong: LED=1 over a pull-down, active-low LED=1 over a
# pull-up (line low), then a 5 Hz blink.
setline() {  # setline NAME PULL ARGS...: value of LED while `facekit gpio set ARGS` holds it
  n=$1; p=$2; shift 2
  pull 3 $p
  fkbg gpio set facekit-gpiotest "$@" 2> $RUN/$n.log; S=$!
  waitline "facekit: set" $RUN/$n.log 100 || fail "gpio set did not start: $(cat $RUN/$n.log)"
  value 3; stopbg $S
}
set_high=$(setline set-high down LED=1)
set_activelow=$(setline set-activelow up LED=1 --active-low)
pull 3 down
# Blinks until stopped: the 40 samples take 2 s on an idle host, far longer when TCG is starved,
# and a blink that ended on its own before them read as a dead LED.
fkbg gpio led facekit-gpiotest LED blink:5 --duration 120s 2> $RUN/led.log; S=$!
waitline "facekit: LED" $RUN/led.log 100 || fail "gpio led did not start: $(cat $RUN/led.log)"
samples=""; i=0; while [ $i -lt 40 ]; do samples="$samples$(value 3)"; sleep 0.05; i=$((i + 1)); done
stopbg $S
# Three 400 ms sync pulses, 1 s apart, through the kiosk's sync-pulse helper.
pull 4 down
fkbg gpio pulse facekit-gpiotest SYNC --width 400ms --count 3 --interval 1s --json > $RUN/gpio-pulses.jsonl 2> $RUN/pulse.log; S=$!
waitline "facekit: pulsing" $RUN/pulse.log 100 || fail "gpio pulse did not start: $(cat $RUN/pulse.log)"
pulses=""; i=0; while [ $i -lt 40 ] && [ -e /proc/$S ]; do pulses="$pulses$(value 4)"; sleep 0.05; i=$((i + 1)); done
stopbg $S
jsonl gpio-pulses $RUN/gpio-pulses.jsonl
echo "{\"setHigh\": $set_high, \"setActiveLowHigh\": $set_activelow, \"blinkSamples\": \"$samples\", \"pulseSamples\": \"$pulses\"}" > $RUN/gpio-outputs.json
json gpio-outputs $RUN/gpio-outputs.json
cat $RUN/gpio-outputs.json

# The latency bench: facekit drives TTL_IN through gpio-sim from its own thread, 100 Hz for 10 s,
# each edge after the previous one was read (see BenchGPIOCommand); then 5 s open loop, for the
# figures only: a stalled emulated CPU merges edge pairs there (reported, not checked).
pull 0 down
fk bench gpio --chip facekit-gpiotest --line TTL_IN --rate 100 --seconds 10 --store /run/bench-gpio-store --json \
  > $RUN/bench-gpio.json 2> $RUN/bench-gpio.log; r=$?
cat $RUN/bench-gpio.log
json bench-gpio $RUN/bench-gpio.json
pull 0 down
fk bench gpio --chip facekit-gpiotest --line TTL_IN --rate 100 --seconds 5 --open-loop --store /run/bench-gpio-store \
  --json > $RUN/bench-gpio-openloop.json 2> /dev/null
json bench-gpio-openloop $RUN/bench-gpio-openloop.json
[ $r = 0 ] || fail "bench gpio exited $r"
echo 0 > $C/live; true
