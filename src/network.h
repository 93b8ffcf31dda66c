/*
 * network.h — the network rate of the stationary choice (src/network.c). Runtime
 * services floor (doc/design.md, "Layers").
 */
#ifndef STARGEMM_NETWORK_H
#define STARGEMM_NETWORK_H

/* Bytes per second a rank sends and receives in tiles over StarPU-MPI into *rate:
 * STARGEMM_NETWORK_RATE, else INFINITY on one rank, else measured (once per
 * communicator, collective: the slowest rank's). 0, -EINVAL (a bad setting), -ENOMEM
 * or -EIO, agreed on every rank. */
int stargemm__network_rate(double *rate);

#endif
