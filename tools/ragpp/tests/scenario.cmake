# cmake -DPROGRAM=ragpp -DDIR=work-folder -P scenario.cmake
# The freshness-and-access scenario of the cli.scenario.* tests: a folder of notes (one
# for admins only), indexed twice (DIR/idx for the freshness and access checks, DIR/idx2
# for the incremental update), then warranty.md deleted, "5 seconds" changed to
# "8 seconds" in router.md and new.md added.
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR}/notes)
file(WRITE ${DIR}/notes/warranty.md "# Warranty\n\n## Duration\n\nThe warranty of the printer lasts two years from delivery.\n")
file(WRITE ${DIR}/notes/router.md "# Router\n\n## Reset\n\nTo reset the router, hold the reset button for 5 seconds.\n")
file(WRITE ${DIR}/notes/admins.md
  "---\ngroups: [admins]\n---\n# Admin note\n\n## Passwords\n\nThe admin password rotation happens every month.\n")
file(WRITE ${DIR}/notes/printer.md "# Printer\n\n## Toner\n\nReplace the toner cartridge when the light blinks.\n")
file(WRITE ${DIR}/notes/network.md "# Network\n\n## Cables\n\nUse category 6 cables for the office network.\n")
foreach(out idx idx2)
  execute_process(COMMAND ${PROGRAM} index ${DIR}/notes --out ${DIR}/${out} --quiet RESULT_VARIABLE rc
                  OUTPUT_VARIABLE o ERROR_VARIABLE e)
  if(NOT rc EQUAL 0 OR NOT o MATCHES "indexed 5 chunks from 5 files")
    message(FATAL_ERROR "ragpp index ${out}: exit ${rc}\n${o}\n${e}")
  endif()
endforeach()
file(REMOVE ${DIR}/notes/warranty.md)
file(READ ${DIR}/notes/router.md router)
string(REPLACE "5 seconds" "8 seconds" router "${router}")
file(WRITE ${DIR}/notes/router.md "${router}")
file(WRITE ${DIR}/notes/new.md "# New\n\n## Coffee\n\nThe coffee machine is descaled on Fridays.\n")
