#!/bin/sh
# check-queues.sh CONFIG: does the queue that CONFIG names exist in its Orchestrator folder?
# Prints the verdict and the queues that do exist; exit 0 when it exists, 1 when it does not.
set -eu
config=$1
field() { sed -n "s/.*\"$1\": *\"\\([^\"]*\\)\".*/\\1/p" "$config"; }
folder=$(field folder)
queue=$(field queue)
names=$(uip or queues list --folder "$folder" --output json | tr '{' '\n' |
	sed -n 's/.*"Name": *"\([^"]*\)".*/\1/p')
for n in $names; do
	if [ "$n" = "$queue" ]; then
		echo "queue '$queue' exists in folder '$folder'"
		exit 0
	fi
done
echo "queue '$queue' does not exist in folder '$folder'; it has:" $names
exit 1
