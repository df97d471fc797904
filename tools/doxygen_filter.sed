# tools/doxygen_filter.sed: doxygen's INPUT_FILTER for xrt.h (see Doxyfile).
# xrt.h documents declarations with plain C comments; this turns them into
# doxygen comments on the fly, so the header stays in its own style:
#   - a comment opening a line ("/* Creates a client ...") documents the
#     declaration after it ("/** ..."), except section banners
#     ("/* ====", "/* ----"), which stay plain comments;
#   - a comment after code on the same line ("int rank; /* of the array */")
#     documents that member or value ("/**< ...").
# The header's opening comment becomes the file's own documentation.
1s|^/\*$|/** @file xrt.h|
/^[[:space:]]*\/\* [^=-]/s|/\* |/** |
/^[[:space:]]*[^[:space:]/*]/s|\([^[:space:]]\)\([[:space:]]\{1,\}\)/\* |\1\2/**< |
