# Writes OUT, a C source defining `const char NAME[]`: the bytes of IN and a
# final NUL. Run at build time (cmake -DNAME=... -DIN=... -DOUT=... -P),
# so that a data file under src/ is compiled in as it is in the tree.
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n    "
       bytes "${bytes}")
file(WRITE "${OUT}.tmp"
     "/* Generated from ${IN} by cmake/embed_text.cmake; do not edit. */\n"
     "const char ${NAME}[] = {\n    ${bytes}0x00};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
