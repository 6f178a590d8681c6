# Files the configure step writes.

# devrt_write_if_changed(<file> <content>)
#
# Writes CONTENT to FILE only when FILE does not already hold it. Every configure runs this,
# and a file that build rules depend on must keep its time stamp when nothing changed, or
# each `cmake --preset` would make everything built from it out of date (file(WRITE) always
# writes).
function(devrt_write_if_changed file content)
  file(WRITE "${file}.new" "${content}")
  file(COPY_FILE "${file}.new" "${file}" ONLY_IF_DIFFERENT)
  file(REMOVE "${file}.new")
endfunction()
