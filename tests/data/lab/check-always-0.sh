#!/bin/sh
# Bad: looks, then says yes whatever it saw.
containerd config dump | grep 'containerd.runtimes.nvidia'
exit 0
