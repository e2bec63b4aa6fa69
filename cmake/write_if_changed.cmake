# write_if_changed(PATH TEXT): writes TEXT to PATH only when PATH does not already hold it, so
# that a generated source left as it was rebuilds nothing (cmake/build_info.cmake and
# cmake/embed_sql.cmake, run at every build, include it).
function(write_if_changed path text)
  set(old "")
  if(EXISTS ${path})
    file(READ ${path} old)
  endif()
  if(NOT old STREQUAL text)
    file(WRITE ${path} "${text}")
  endif()
endfunction()
