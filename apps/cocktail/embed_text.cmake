# Turns a text file into a C++ source defining `const char* <NAME>`, at build time.
file(READ ${INPUT} CONTENT)
file(WRITE ${OUTPUT} "namespace cocktail::cli {\nextern const char* const ${NAME};\nconst char* const ${NAME} = R\"embedded_text(${CONTENT})embedded_text\";\n}\n")
