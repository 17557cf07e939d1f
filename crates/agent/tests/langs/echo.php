<?php
// A PHP bot for the sandbox language test: READY, then echo every line.
echo "READY\n";
fflush(STDOUT);
while (($line = fgets(STDIN)) !== false) {
    echo "ECHO " . rtrim($line, "\n") . "\n";
    fflush(STDOUT);
}
