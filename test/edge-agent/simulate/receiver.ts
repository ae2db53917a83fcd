/** A UDP receiver on 127.0.0.1 for the simulate tests: records every datagram in arrival order. */
import dgram from 'node:dgram';
import { LOOPBACK } from '../../support/ports.js';

export interface Receiver {
  port: number;
  datagrams: Buffer[];
  close(): Promise<void>;
}

/** Binds a receiver on a free loopback port with a 4 MiB receive buffer (the kernel may grant less). */
export function startReceiver(): Promise<Receiver> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket({ type: 'udp4', recvBufferSize: 4 * 1024 * 1024 });
    const datagrams: Buffer[] = [];
    socket.on('message', (msg) => datagrams.push(msg));
    socket.once('error', reject);
    socket.bind(0, LOOPBACK, () => {
      socket.off('error', reject);
      resolve({
        port: socket.address().port,
        datagrams,
        close: () => new Promise<void>((done) => socket.close(() => done())),
      });
    });
  });
}
