# PG_CHECK_RAGEL(generated-file, min-version)
# Finds ragel >= min-version.  Without it the build can still go on when the
# generated parser C is present in the source tree (a release tarball); in a
# git checkout it stops and names the Debian package.  Defines HAVE_RAGEL.
AC_DEFUN([PG_CHECK_RAGEL], [
  AC_ARG_VAR([RAGEL], [the ragel state machine compiler])
  AC_PATH_PROG([RAGEL], [ragel], [no])
  pg_ragel_ok=no
  AS_IF([test "x$RAGEL" != xno], [
    AC_MSG_CHECKING([ragel version >= $2])
    pg_ragel_version=`$RAGEL --version | sed -n 's/.*version \([[0-9.]]*\).*/\1/p'`
    AS_VERSION_COMPARE([$pg_ragel_version], [$2],
      [AC_MSG_RESULT([no ($pg_ragel_version)])],
      [AC_MSG_RESULT([yes ($pg_ragel_version)]); pg_ragel_ok=yes],
      [AC_MSG_RESULT([yes ($pg_ragel_version)]); pg_ragel_ok=yes])
  ])
  AS_IF([test "x$pg_ragel_ok" != xyes && test ! -f "$srcdir/$1"],
        [AC_MSG_ERROR([ragel >= $2 not found and $1 is not generated: install the Debian package ragel (or run ./dev deps)])])
  AM_CONDITIONAL([HAVE_RAGEL], [test "x$pg_ragel_ok" = xyes])
])
