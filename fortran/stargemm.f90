! fortran/stargemm.f90 — the Fortran 2008 module over stargemm's public C API
! (src/stargemm.h), for the quantum-chemistry codes written in Fortran: the runtime,
! matrices (dense, irregular, block-sparse, distributed, made on demand by a Fortran
! function), fills, scatter and gather,
! the dense and block-sparse products with their options, the matrix operations, and
! the errors as Fortran strings.
!
! The C functions are bound as they are (iso_c_binding): a matrix is a type(c_ptr), an
! error is a negative integer whose message stargemm_error_message() returns, indices
! of tiles are 0-based as in C, scalars of the matrix's type are passed by reference
! (c_loc of a variable of that kind) where C takes a void pointer. Only the few calls
! whose C form a Fortran caller cannot make directly are wrapped: stargemm_init without
! the command line, the error message, the options' initialisers. Built when configure
! finds a Fortran compiler; installed as stargemm.mod beside stargemm.h.
module stargemm
   use, intrinsic :: iso_c_binding
   implicit none

   ! Element types (stargemm_type): BLAS's letters.
   integer(c_int), parameter :: STARGEMM_S = ichar('s'), STARGEMM_D = ichar('d'), &
      STARGEMM_C = ichar('c'), STARGEMM_Z = ichar('z')

   ! struct stargemm_ooc_options
   type, bind(c) :: stargemm_ooc_options
      integer(c_int64_t) :: b, c, d
      integer(c_int) :: lookahead
      real(c_double) :: c_fraction
      integer(c_int64_t) :: device_bytes
      real(c_double) :: usable_fraction
   end type stargemm_ooc_options

   ! struct stargemm_bsgemm_options
   type, bind(c) :: stargemm_bsgemm_options
      real(c_double) :: filter_eps
      integer(c_int) :: out_of_core
      type(stargemm_ooc_options) :: ooc
      integer(c_int) :: stationary
      integer(c_int) :: reuse_a, reuse_b
   end type stargemm_bsgemm_options

   ! struct stargemm_distribution: a P x Q grid; row_proc (mt entries in [0, P)),
   ! col_proc (nt entries in [0, Q)) and grid (P * Q ranks) are c_loc of c_int arrays,
   ! or c_null_ptr for the block-cyclic default and the row-major grid
   type, bind(c) :: stargemm_distribution
      integer(c_int) :: p, q
      type(c_ptr) :: row_proc = c_null_ptr, col_proc = c_null_ptr, grid = c_null_ptr
   end type stargemm_distribution

   interface
      integer(c_int) function stargemm_init_c(cfg, argc, argv) bind(c, name='stargemm_init')
         import :: c_int, c_ptr
         type(c_ptr), value :: cfg, argc, argv
      end function
      integer(c_int) function stargemm_finalize() bind(c)
         import :: c_int
      end function
      integer(c_int) function stargemm_rank() bind(c)
         import :: c_int
      end function
      integer(c_int) function stargemm_nranks() bind(c)
         import :: c_int
      end function
      integer(c_int) function stargemm_wait() bind(c)
         import :: c_int
      end function
      type(c_ptr) function stargemm_last_error_c() bind(c, name='stargemm_last_error')
         import :: c_ptr
      end function

      ! ---- matrices --------------------------------------------------------------
      integer(c_int) function stargemm_matrix_create(a, m, n, mb, nb, p, q) bind(c)
         import :: c_int, c_int64_t, c_ptr
         type(c_ptr) :: a
         integer(c_int64_t), value :: m, n, mb, nb
         integer(c_int), value :: p, q
      end function
      integer(c_int) function stargemm_matrix_create_type(a, type, m, n, mb, nb, p, q) &
            bind(c)
         import :: c_int, c_int64_t, c_ptr
         type(c_ptr) :: a
         integer(c_int), value :: type, p, q
         integer(c_int64_t), value :: m, n, mb, nb
      end function
      integer(c_int) function stargemm_matrix_create_irregular(a, mt, row_sizes, nt, &
            col_sizes, p, q) bind(c)
         import :: c_int, c_int64_t, c_ptr
         type(c_ptr) :: a
         integer(c_int64_t), value :: mt, nt
         integer(c_int64_t), intent(in) :: row_sizes(*), col_sizes(*)
         integer(c_int), value :: p, q
      end function
      ! present(2, npresent): the 0-based (i, j) of each tile that exists
      integer(c_int) function stargemm_matrix_create_sparse(a, mt, row_sizes, nt, &
            col_sizes, npresent, present, p, q) bind(c)
         import :: c_int, c_int64_t, c_ptr
         type(c_ptr) :: a
         integer(c_int64_t), value :: mt, nt, npresent
         integer(c_int64_t), intent(in) :: row_sizes(*), col_sizes(*), present(*)
         integer(c_int), value :: p, q
      end function
      ! npresent < 0: dense (present is not read; pass any array)
      integer(c_int) function stargemm_matrix_create_distributed_type(a, type, mt, &
            row_sizes, nt, col_sizes, npresent, present, dist) bind(c)
         import :: c_int, c_int64_t, c_ptr, stargemm_distribution
         type(c_ptr) :: a
         integer(c_int), value :: type
         integer(c_int64_t), value :: mt, nt, npresent
         integer(c_int64_t), intent(in) :: row_sizes(*), col_sizes(*), present(*)
         type(stargemm_distribution), intent(in) :: dist
      end function
      ! Tiles made on demand: generate is c_funloc of a bind(c) integer(c_int) function
      ! (tile, ld, rows, cols, row0, col0, arg) as fill_elements' subroutine, returning
      ! 0 or a status; called on StarPU's worker threads, so reentrant (recursive)
      integer(c_int) function stargemm_matrix_create_generated(a, type, mt, row_sizes, &
            nt, col_sizes, npresent, present, dist, generate, arg) bind(c)
         import :: c_int, c_int64_t, c_ptr, c_funptr, stargemm_distribution
         type(c_ptr) :: a
         integer(c_int), value :: type
         integer(c_int64_t), value :: mt, nt, npresent
         integer(c_int64_t), intent(in) :: row_sizes(*), col_sizes(*), present(*)
         type(stargemm_distribution), intent(in) :: dist
         type(c_funptr), value :: generate
         type(c_ptr), value :: arg
      end function
      ! cuda: c_funloc of a bind(c) integer(c_int) function (tile, ld, rows, cols, row0,
      ! col0, stream, arg), tile a device address (type(c_ptr), value), stream the
      ! worker's cudaStream_t (type(c_ptr), value), queueing its work there; or
      ! c_null_funptr
      integer(c_int) function stargemm_matrix_set_cuda_generator(a, cuda) bind(c)
         import :: c_int, c_ptr, c_funptr
         type(c_ptr), value :: a
         type(c_funptr), value :: cuda
      end function
      integer(c_int) function stargemm_matrix_is_generated(a) bind(c)
         import :: c_int, c_ptr
         type(c_ptr), value :: a
      end function
      subroutine stargemm_matrix_destroy(a) bind(c)
         import :: c_ptr
         type(c_ptr), value :: a
      end subroutine
      integer(c_int64_t) function stargemm_matrix_m(a) bind(c)
         import :: c_int64_t, c_ptr
         type(c_ptr), value :: a
      end function
      integer(c_int64_t) function stargemm_matrix_n(a) bind(c)
         import :: c_int64_t, c_ptr
         type(c_ptr), value :: a
      end function
      integer(c_int64_t) function stargemm_matrix_mt(a) bind(c)
         import :: c_int64_t, c_ptr
         type(c_ptr), value :: a
      end function
      integer(c_int64_t) function stargemm_matrix_nt(a) bind(c)
         import :: c_int64_t, c_ptr
         type(c_ptr), value :: a
      end function
      integer(c_int64_t) function stargemm_matrix_present_count(a) bind(c)
         import :: c_int64_t, c_ptr
         type(c_ptr), value :: a
      end function
      integer(c_int) function stargemm_matrix_owner(a, i, j) bind(c)
         import :: c_int, c_int64_t, c_ptr
         type(c_ptr), value :: a
         integer(c_int64_t), value :: i, j
      end function
      ! fn: c_funloc of a bind(c) subroutine (tile, ld, rows, cols, row0, col0, arg)
      ! with tile(ld, *) of the matrix's type and the integers by value
      integer(c_int) function stargemm_matrix_fill_elements(a, fn, arg) bind(c)
         import :: c_int, c_ptr, c_funptr
         type(c_ptr), value :: a, arg
         type(c_funptr), value :: fn
      end function
      integer(c_int) function stargemm_matrix_fill_random(a, seed) bind(c)
         import :: c_int, c_int64_t, c_ptr
         type(c_ptr), value :: a
         integer(c_int64_t), value :: seed
      end function
      ! full: c_loc of a column-major array of the matrix's type, significant on root
      integer(c_int) function stargemm_matrix_scatter(a, full, ld, root) bind(c)
         import :: c_int, c_int64_t, c_ptr
         type(c_ptr), value :: a, full
         integer(c_int64_t), value :: ld
         integer(c_int), value :: root
      end function
      integer(c_int) function stargemm_matrix_gather(a, full, ld, root) bind(c)
         import :: c_int, c_int64_t, c_ptr
         type(c_ptr), value :: a, full
         integer(c_int64_t), value :: ld
         integer(c_int), value :: root
      end function

      ! ---- products --------------------------------------------------------------
      ! transa, transb: 'N', 'T' or 'C' as c_char
      integer(c_int) function stargemm_pdgemm(transa, transb, alpha, a, b, beta, c) bind(c)
         import :: c_int, c_char, c_double, c_ptr
         character(kind=c_char), value :: transa, transb
         real(c_double), value :: alpha, beta
         type(c_ptr), value :: a, b, c
      end function
      integer(c_int) function stargemm_gemm(transa, transb, alpha, a, b, beta, c) bind(c)
         import :: c_int, c_char, c_ptr
         character(kind=c_char), value :: transa, transb
         type(c_ptr), value :: alpha, a, b, beta, c
      end function
      integer(c_int) function stargemm_matrix_create_product(c, transa, transb, a, b, &
            cold) bind(c)
         import :: c_int, c_char, c_ptr
         type(c_ptr) :: c
         character(kind=c_char), value :: transa, transb
         type(c_ptr), value :: a, b, cold
      end function
      subroutine stargemm_bsgemm_options_init(opt) bind(c)
         import :: stargemm_bsgemm_options
         type(stargemm_bsgemm_options) :: opt
      end subroutine
      ! opt: c_loc of a stargemm_bsgemm_options, or c_null_ptr; info: c_null_ptr
      integer(c_int) function stargemm_bsgemm(transa, transb, alpha, a, b, beta, c, opt, &
            info) bind(c)
         import :: c_int, c_char, c_double, c_ptr
         character(kind=c_char), value :: transa, transb
         real(c_double), value :: alpha, beta
         type(c_ptr), value :: a, b, c, opt, info
      end function
      integer(c_int) function stargemm_bsgemm_type(transa, transb, alpha, a, b, beta, c, &
            opt, info) bind(c)
         import :: c_int, c_char, c_ptr
         character(kind=c_char), value :: transa, transb
         type(c_ptr), value :: alpha, a, b, beta, c, opt, info
      end function

      ! ---- norms, filtering and the matrix operations ----------------------------
      integer(c_int) function stargemm_matrix_norms(a, norms) bind(c)
         import :: c_int, c_double, c_ptr
         type(c_ptr), value :: a
         real(c_double) :: norms(*)
      end function
      integer(c_int) function stargemm_matrix_filter(a, eps, removed) bind(c)
         import :: c_int, c_double, c_int64_t, c_ptr
         type(c_ptr), value :: a
         real(c_double), value :: eps
         integer(c_int64_t) :: removed
      end function
      integer(c_int) function stargemm_matrix_copy(b, a) bind(c)
         import :: c_int, c_ptr
         type(c_ptr) :: b
         type(c_ptr), value :: a
      end function
      integer(c_int) function stargemm_matrix_scale(a, alpha) bind(c)
         import :: c_int, c_ptr
         type(c_ptr), value :: a, alpha
      end function
      integer(c_int) function stargemm_matrix_add(c, alpha, a, beta, b) bind(c)
         import :: c_int, c_ptr
         type(c_ptr) :: c
         type(c_ptr), value :: alpha, a, beta, b
      end function
      integer(c_int) function stargemm_matrix_add_diagonal(a, alpha) bind(c)
         import :: c_int, c_ptr
         type(c_ptr), value :: a, alpha
      end function
      integer(c_int) function stargemm_matrix_trace(a, trace) bind(c)
         import :: c_int, c_ptr
         type(c_ptr), value :: a, trace
      end function
      integer(c_int) function stargemm_matrix_norm(a, norm) bind(c)
         import :: c_int, c_double, c_ptr
         type(c_ptr), value :: a
         real(c_double) :: norm
      end function
   end interface

contains

   ! stargemm_init without a configuration or the command line (MPI started by it
   ! unless the program did).
   integer(c_int) function stargemm_init()
      stargemm_init = stargemm_init_c(c_null_ptr, c_null_ptr, c_null_ptr)
   end function

   ! The message of the last error returned in this thread ("" if none).
   function stargemm_error_message() result(msg)
      character(len=:), allocatable :: msg
      type(c_ptr) :: p
      character(kind=c_char), pointer :: chars(:)
      integer(c_size_t) :: n, k
      interface
         integer(c_size_t) function c_strlen(s) bind(c, name='strlen')
            import :: c_size_t, c_ptr
            type(c_ptr), value :: s
         end function
      end interface

      p = stargemm_last_error_c()
      n = 0
      if (c_associated(p)) n = c_strlen(p)
      allocate(character(len=n) :: msg)
      if (n == 0) return
      call c_f_pointer(p, chars, [n])
      do k = 1, n
         msg(k:k) = chars(k)
      end do
   end function
end module stargemm
