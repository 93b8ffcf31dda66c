! examples/sign_f.f90 — examples/sign.c's sign iteration written in Fortran with the
! stargemm module (fortran/stargemm.f90), as a quantum-chemistry code would call it:
!
!   X0 = H / (Gershgorin bound);  X <- 1.5 X - 0.5 X (X X)  until ||X X - I||_F / sqrt(n) < tol
!
! H is banded with elements decaying away from the diagonal and a gap around 0, on
! irregular tiles, block-sparse; filtered with eps. Rank 0 runs the same steps densely
! with matmul and compares; a call with mismatched tilings must be refused with its
! message. Exit status 0 when both hold.
!
! Usage: sign_f [P]   (under mpiexec with P processes; a P x 1 grid)
module sign_h
   use, intrinsic :: iso_c_binding
   implicit none
   integer(c_int64_t), parameter :: band = 30
   real(c_double), parameter :: decay = 0.5d0

contains

   ! The Gershgorin bound of H: |diagonal| <= 1, the off-diagonal sum <= 0.2 sum e^(-decay k).
   real(c_double) function bound()
      integer(c_int64_t) :: k

      bound = 1.0d0
      do k = 1, band
         bound = bound + 0.2d0 * exp(-decay * real(k, c_double))
      end do
   end function

   ! H(r, c) / bound, 0-based indices: +-(0.5 .. 1) on the diagonal, alternating; off it
   ! 0.1 e^(-decay |r - c|) times a symmetric value in [-1, 1]; zero beyond the band.
   real(c_double) function element(r, c)
      integer(c_int64_t), intent(in) :: r, c
      integer(c_int64_t) :: d

      d = abs(r - c)
      if (d == 0) then
         element = merge(1.0d0, -1.0d0, mod(r, 2_c_int64_t) == 0) * &
            (0.75d0 + 0.25d0 * sin(0.7d0 * real(r, c_double)))
      else if (d > band) then
         element = 0.0d0
      else
         element = 0.1d0 * exp(-decay * real(d, c_double)) * sin(0.37d0 * real(r + c, c_double))
      end if
      element = element / bound()
   end function

   ! The fill function stargemm calls for each tile: column-major, leading dimension ld.
   subroutine fill_h(tile, ld, rows, cols, row0, col0, arg) bind(c)
      integer(c_int64_t), value :: ld, rows, cols, row0, col0
      real(c_double) :: tile(ld, *)
      type(c_ptr), value :: arg
      integer(c_int64_t) :: r, c

      do c = 1, cols
         do r = 1, rows
            tile(r, c) = element(row0 + r - 1, col0 + c - 1)
         end do
      end do
   end subroutine
end module sign_h

program sign_f
   use, intrinsic :: iso_c_binding
   use stargemm
   use sign_h
   implicit none
   integer(c_int64_t), parameter :: pattern_sizes(5) = [31, 47, 40, 55, 36]
   real(c_double), parameter :: eps = 1.0d-9, tol = 1.0d-7
   integer(c_int64_t), allocatable :: sizes(:), pairs(:)
   integer(c_int64_t) :: n, nt, np, i, j, r0, c0, gap
   integer(c_int) :: nprocs, ret, step, steps
   type(c_ptr) :: x, x2, y, e, bad
   type(stargemm_bsgemm_options), target :: opt
   real(c_double), target :: minus_one, one
   real(c_double) :: err, diff
   real(c_double), allocatable, target :: xf(:, :), d(:, :)
   character(len=16) :: arg
   logical :: ok

   nprocs = 1
   if (command_argument_count() > 0) then
      call get_command_argument(1, arg)
      read (arg, *) nprocs
   end if
   ret = stargemm_init()
   if (ret /= 0) then
      print '(a)', 'stargemm_init: ' // stargemm_error_message()
      stop 1
   end if

   ! Tiles of 31 to 55 rows, 400 rows in all (the last tile ragged).
   allocate(sizes(0))
   n = 0
   do while (n < 400)
      nt = size(sizes, kind=c_int64_t)
      sizes = [sizes, min(pattern_sizes(mod(nt, 5_c_int64_t) + 1), 400 - n)]
      n = n + sizes(nt + 1)
   end do
   nt = size(sizes, kind=c_int64_t)
   ! The tiles that meet the band, as 0-based (i, j) pairs.
   allocate(pairs(0))
   r0 = 0
   do i = 0, nt - 1
      c0 = 0
      do j = 0, nt - 1
         gap = max(0_c_int64_t, c0 - (r0 + sizes(i + 1) - 1), r0 - (c0 + sizes(j + 1) - 1))
         if (gap <= band) pairs = [pairs, i, j]
         c0 = c0 + sizes(j + 1)
      end do
      r0 = r0 + sizes(i + 1)
   end do
   np = size(pairs, kind=c_int64_t) / 2
   ret = stargemm_matrix_create_sparse(x, nt, sizes, nt, sizes, np, pairs, nprocs, 1_c_int)
   if (ret == 0) ret = stargemm_matrix_fill_elements(x, c_funloc(fill_h), c_null_ptr)
   call check(ret, 'creating X0')

   call stargemm_bsgemm_options_init(opt)
   opt%filter_eps = eps
   minus_one = -1.0d0
   one = 1.0d0
   steps = 0
   do step = 1, 30
      ret = stargemm_matrix_create_product(x2, 'N', 'N', x, x, c_null_ptr)
      if (ret == 0) ret = stargemm_bsgemm('N', 'N', 1.0d0, x, x, 0.0d0, x2, c_loc(opt), c_null_ptr)
      ! ||X X - I||_F / sqrt(n)
      if (ret == 0) ret = stargemm_matrix_copy(e, x2)
      if (ret == 0) ret = stargemm_matrix_add_diagonal(e, c_loc(minus_one))
      if (ret == 0) ret = stargemm_matrix_norm(e, err)
      call check(ret, 'the error')
      call stargemm_matrix_destroy(e)
      err = err / sqrt(real(n, c_double))
      if (stargemm_rank() == 0) print '(a, i3, a, es10.3, a, i6, a)', 'step', step, &
         '  ||X X - I||_F / sqrt(n) ', err, '  tiles of X', stargemm_matrix_present_count(x), &
         ' present'
      if (err < tol) then
         call stargemm_matrix_destroy(x2)
         exit
      end if
      ! Y = 1.5 X - 0.5 X X2, Y's pattern X X2's united with X's (X is its old C)
      ret = stargemm_matrix_create_product(y, 'N', 'N', x, x2, x)
      if (ret == 0) ret = stargemm_bsgemm('N', 'N', -0.5d0, x, x2, 1.5d0, y, c_loc(opt), c_null_ptr)
      call check(ret, 'the step')
      call stargemm_matrix_destroy(x2)
      call stargemm_matrix_destroy(x)
      x = y
      steps = step
   end do

   ! Rank 0: the same steps densely.
   allocate(xf(n, n))
   ret = stargemm_matrix_gather(x, c_loc(xf), n, 0_c_int)
   call check(ret, 'gathering X')
   ok = err < tol
   if (stargemm_rank() == 0) then
      allocate(d(n, n))
      do j = 1, n
         do i = 1, n
            d(i, j) = element(i - 1, j - 1)
         end do
      end do
      do step = 1, steps
         d = 1.5d0 * d - 0.5d0 * matmul(d, matmul(d, d))
      end do
      diff = sqrt(sum((xf - d)**2) / sum(d**2))
      print '(a, i3, a, es10.3)', 'against the dense iteration after', steps, ' steps: ', diff
      ok = ok .and. diff < 1.0d-6
   end if

   ! Bad input: X and a matrix of other tilings cannot be added.
   ret = stargemm_matrix_create(bad, n, n, 64_c_int64_t, 64_c_int64_t, nprocs, 1_c_int)
   call check(ret, 'creating a dense matrix')
   ret = stargemm_matrix_add(e, c_loc(one), x, c_loc(one), bad)
   if (stargemm_rank() == 0) print '(a)', 'refused: ' // stargemm_error_message()
   ok = ok .and. ret < 0 .and. index(stargemm_error_message(), 'same tilings') > 0
   call stargemm_matrix_destroy(bad)
   call stargemm_matrix_destroy(x)
   ret = stargemm_finalize()
   if (.not. ok) stop 1

contains

   subroutine check(ret, what)
      integer(c_int), intent(in) :: ret
      character(len=*), intent(in) :: what

      if (ret /= 0) then
         print '(a)', 'sign_f: ' // what // ': ' // stargemm_error_message()
         stop 1
      end if
   end subroutine
end program sign_f
