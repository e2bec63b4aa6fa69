// The translation unit that builds cmake/precompiled_headers.cmake's header; it defines nothing.
