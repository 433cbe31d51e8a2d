# cmake -DPROGRAM=ragpp -DDIR=work-folder -P deleted_private.cmake
# The set-up of cli.scenario.deleted_private_*: a folder with a public note and a note for
# admins only, both about the warranty, indexed into DIR/idx; then the admins' note is
# deleted. A reader who may not read it must not learn that it existed, not even from the
# warning that a source was deleted.
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR}/notes)
file(WRITE ${DIR}/notes/public.md "# Warranty\n\n## Duration\n\nThe printer warranty lasts two years.\n")
file(WRITE ${DIR}/notes/secret.md
  "---\ngroups: [admins]\n---\n# Warranty deal\n\n## Duration\n\nThe warranty deal with the vendor lasts five years.\n")
execute_process(COMMAND ${PROGRAM} index ${DIR}/notes --out ${DIR}/idx --quiet RESULT_VARIABLE rc
                OUTPUT_VARIABLE o ERROR_VARIABLE e)
if(NOT rc EQUAL 0 OR NOT o MATCHES "indexed 2 chunks from 2 files")
  message(FATAL_ERROR "ragpp index: exit ${rc}\n${o}\n${e}")
endif()
file(REMOVE ${DIR}/notes/secret.md)
